"""`python -m mwemt`. A stop signal that arrives while the interpreter is still importing the
command exits as the command itself would (128 + the signal's number, no traceback); `main`
installs its own handlers as its first step."""

import signal
import sys


def _stopped_while_starting(signum, frame):
    sys.stderr.write(f"mwemt: stopped by {signal.Signals(signum).name} while starting; nothing was written\n")
    raise SystemExit(128 + signum)


for _sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    if signal.getsignal(_sig) is not signal.SIG_IGN:   # started ignoring it (nohup, a background job): keep it so
        signal.signal(_sig, _stopped_while_starting)

from mwemt.cli import main  # noqa: E402

sys.exit(main())
