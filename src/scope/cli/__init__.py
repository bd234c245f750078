"""The command line: arguments, commands and what they print."""

from scope.cli.main import main

__all__ = ["main"]
