"""Which slow optional modules a submission is going to import, read off its text by the worker."""

import pytest

from attnlab.grade import preloads

OPTIONAL = (*preloads.OPTIONAL, "matplotlib.pyplot")


@pytest.mark.parametrize(
    "text",
    [
        "import matplotlib.pyplot as plt\n",
        "from matplotlib import pyplot as plt\n",
        "from matplotlib import (colors, pyplot)\n",
        "import numpy as np, matplotlib.pyplot as plt\n",
        "import numpy as np; import matplotlib.pyplot\n",
        "def show(X):\n    import matplotlib.pyplot as plt\n    plt.imshow(X)\n",
    ],
)
def test_is_pyplot_wanted_however_a_submission_imports_it(text):
    assert preloads.wanted(OPTIONAL, [text]) == ["matplotlib.pyplot"]


@pytest.mark.parametrize(
    "text",
    [
        "import numpy as np\n",
        "# import matplotlib.pyplot as plt\nimport numpy as np\n",
        "import matplotlib\n",  # pyplot is a module of its own: this does not import it
        "x = 'matplotlib.pyplot'\n",
    ],
)
def test_is_nothing_wanted_for_a_submission_that_imports_no_optional_module(text):
    assert preloads.wanted(OPTIONAL, [text]) == []


def test_is_numpy_s_testing_wanted_when_a_submission_uses_it_by_attribute_or_import():
    assert preloads.wanted(OPTIONAL, ["import numpy as np\nnp.testing.assert_allclose(a, b)\n"]) == ["numpy.testing"]
    assert preloads.wanted(OPTIONAL, ["from numpy.testing import assert_allclose\n"]) == ["numpy.testing"]


@pytest.mark.parametrize("line", ["%matplotlib inline", "!ls", "np.einsum?", "?np.einsum", "  %time f(1)"])
def test_is_ipython_s_converter_wanted_for_a_cell_with_ipython_syntax(line):
    """A magic imports nothing by itself: ``%matplotlib inline`` wants the converter, not pyplot."""
    assert preloads.wanted(OPTIONAL, ["import numpy as np", f"{line}\nx = 1\n"]) == ["IPython.core.inputtransformer2"]


@pytest.mark.parametrize("text", ["print('why?')\n", "a = b != c\n", "# what is 5 % 2?\n"])
def test_is_the_converter_not_wanted_for_plain_python_with_those_characters(text):
    assert preloads.wanted(OPTIONAL, [text]) == []


def test_does_a_package_preload_cover_its_submodules():
    """An assignment that preloads ``matplotlib`` wants it for a submission importing pyplot."""
    assert preloads.wanted(("matplotlib",), ["import matplotlib.pyplot as plt\n"]) == ["matplotlib"]


def test_is_an_empty_cell_no_end_to_the_scan():
    assert preloads.wanted(OPTIONAL, ["", "import matplotlib.pyplot as plt\n"]) == ["matplotlib.pyplot"]


def test_does_a_huge_submission_cost_the_worker_no_more_than_its_first_megabyte():
    """Only the first ``SCANNED`` characters are read: an import after them is a miss (the sandbox
    then imports the module itself), and the scan's time stays bounded."""
    padding = "x = 1\n" * (preloads.SCANNED // 6 + 1)
    assert preloads.wanted(OPTIONAL, ["import matplotlib.pyplot\n" + padding]) == ["matplotlib.pyplot"]
    assert preloads.wanted(OPTIONAL, [padding + "import matplotlib.pyplot\n"]) == []
    assert preloads.wanted(OPTIONAL, [padding, "import matplotlib.pyplot\n"]) == []
