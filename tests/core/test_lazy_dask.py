"""xarray's Dask checks deferred (evalbayes._core.lazy_dask): no Dask import while no Dask
object can exist, and Dask arrays handled exactly as xarray does once one does.

Each check runs in a fresh interpreter: the test session itself may have imported Dask."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

pytest.importorskip("dask")


def run(script: str) -> object:
    """The last line the script prints, read as a Python literal."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def test_datasets_and_a_saved_fit_import_no_dask(tmp_path):
    """EvalData, a fit, its save and its load build xarray objects without importing Dask,
    and leave the import possible afterwards (no None left in sys.modules)."""
    path = tmp_path / "f.nc"
    out = run(
        "import sys\n"
        "import evalbayes as eb\n"
        "data = eb.datasets.load('tinyagent')\n"
        "post = eb.BetaBinomialModel().fit(data, seed=1)\n"
        f"post.save({str(path)!r})\n"
        f"back = eb.load({str(path)!r})\n"
        "found = [sorted(m for m in sys.modules if m.split('.')[0] == 'dask'),\n"
        "         sorted(m for m, v in sys.modules.items() if v is None)]\n"
        "chunks = back.tree['posterior'].to_dataset().chunk({'draw': 500})['mu'].chunks\n"
        "print([*found, chunks[1]])\n"
    )
    assert out == [[], [], (500, 500)]  # and Dask works afterwards: nothing cached as absent


def test_dask_arrays_after_the_deferral_are_dask_arrays():
    """Imported after evalbayes (by the user or by xarray's ``.chunk``), Dask arrays stay lazy
    in xarray (chunked, computed on demand) and reduce to NumPy's sums; xarray's checks give
    the real class and version."""
    out = run(
        "import numpy as np, xarray as xr\n"
        "import evalbayes.data\n"
        "from evalbayes._core.lazy_dask import dask_detection_deferred\n"
        "from xarray.namedarray.pycompat import array_type, mod_version\n"
        "from xarray.namedarray.utils import is_duck_dask_array\n"
        "before = [dask_detection_deferred(), array_type('dask')]\n"
        "xr.Dataset({'a': ('x', np.arange(4.0))}, coords={'x': list('abcd')})\n"
        "chunked = xr.Dataset({'v': ('x', np.arange(6.0))}).chunk({'x': 3})  # imports dask\n"
        "import dask, dask.array as da\n"
        "arr = xr.DataArray(da.from_array(np.arange(12.0).reshape(3, 4), chunks=(3, 2)),\n"
        "                   dims=('s', 't'))\n"
        "total = arr.sum('t')\n"
        "print([before, array_type('dask') == (da.Array,),\n"
        "       str(mod_version('dask')) == dask.__version__,\n"
        "       is_duck_dask_array(arr.data), arr.chunks, is_duck_dask_array(total.data),\n"
        "       total.values.tolist(), chunked['v'].chunks, float(chunked['v'].sum())])\n"
    )
    assert out == [[True, ()], True, True, True, ((3,), (2, 2)), True,
                   [6.0, 22.0, 38.0], ((3, 3),), 15.0]


def test_dask_imported_first_is_left_alone():
    """With Dask imported before evalbayes, xarray has already asked: nothing is deferred and
    a fit still saves (under the thread lock xarray picks) without blocking any import."""
    out = run(
        "import dask.array as da, xarray as xr, numpy as np\n"
        "xr.DataArray(np.zeros(2))\n"
        "import evalbayes.data\n"
        "from evalbayes._core.lazy_dask import dask_detection_deferred\n"
        "arr = xr.DataArray(da.ones(4, chunks=2))\n"
        "print([dask_detection_deferred(), arr.chunks, float(arr.sum())])\n"
    )
    assert out == [False, ((2, 2),), 4.0]


def test_a_save_after_dask_is_imported_takes_dasks_path(tmp_path):
    """Once Dask is imported (after evalbayes), a save asks Dask for its scheduler as
    xarray does (nothing blocked) and the draws read back unchanged."""
    path = tmp_path / "f.nc"
    out = run(
        "import sys, numpy as np\n"
        "import evalbayes as eb\n"
        "post = eb.BetaBinomialModel().fit(eb.datasets.load('tinyagent'), seed=1)\n"
        "import dask.array\n"
        f"post.save({str(path)!r})\n"
        f"back = eb.load({str(path)!r})\n"
        "a, b = post.tree['posterior'], back.tree['posterior']\n"
        "print([all(np.array_equal(a[v].values, b[v].values) for v in a.data_vars),\n"
        "       'dask.base' in sys.modules,\n"
        "       sorted(m for m, v in sys.modules.items() if v is None)])\n"
    )
    assert out == [True, True, []]
