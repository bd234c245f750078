"""What SCOPE can run: the engine's tests, options and modules, as the engine describes them."""
