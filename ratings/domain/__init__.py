"""Pure rating rules (SPEC §5), standard library only."""
