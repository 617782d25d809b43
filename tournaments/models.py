"""Tournament models: seasons, events, games and standings (filled by later issues)."""
