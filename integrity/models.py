"""Integrity models: audit runs, flags, cases, decisions, sanctions and appeals."""
