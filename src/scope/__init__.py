"""SCOPE: performance evaluation of message-passing clusters."""

__version__ = "0.1.0"
