"""`python -m mwemt`. A stop signal while the command is still importing its CLI ends it as one during
its work would (128 + the signal's number, no traceback; a signal it was started ignoring stays ignored);
`main` then handles signals itself."""

import sys

from mwemt.processes import signals_unwind, stopped_while_starting

with signals_unwind():
    try:
        from mwemt.cli import main
    except KeyboardInterrupt as exc:
        sys.exit(stopped_while_starting(exc))

sys.exit(main())
