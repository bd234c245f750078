"""Running the engine: the toolchain, the plan, the launch, the records stored as they arrive."""
