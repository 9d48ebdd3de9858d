"""The interop tests' shared harness gets pytest's assertion messages too."""

import pytest

pytest.register_assert_rewrite("interop_harness")
