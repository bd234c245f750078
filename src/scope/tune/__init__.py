"""scope tune: per-MPI drivers, the tuning files they write, and --apply."""
