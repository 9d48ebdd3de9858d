"""``python -m agui_msgspec``: the same as the ``agui-msgspec`` command."""

import sys

from agui_msgspec._tools.cli import main

sys.exit(main())
