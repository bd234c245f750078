from scope.cli import main

raise SystemExit(main())
