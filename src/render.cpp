// Rendering of evaluations and plans (filled in by the CLI work).
