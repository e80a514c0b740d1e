"""The codemod engine: planning, rewriting, and running over files."""
