"""`python -m agentmd`: the command line."""

from agentmd.cli import main

raise SystemExit(main())
