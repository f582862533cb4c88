from hlogym.cli import main

raise SystemExit(main())
