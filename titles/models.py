"""Title models: the qualification ledger and materialised title state."""
