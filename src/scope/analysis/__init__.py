"""Analysis: model fits and derived quantities."""
