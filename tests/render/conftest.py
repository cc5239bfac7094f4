"""The reference example as a fixture for the drawing tests."""

import pytest
from drawings import reference_example


@pytest.fixture
def reference():
    return reference_example()
