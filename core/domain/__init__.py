"""Pure, stdlib-only pieces every app's domain may use (the tour's clock)."""
