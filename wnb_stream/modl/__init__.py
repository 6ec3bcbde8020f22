"""Level 2: MODL discretization and value grouping."""
