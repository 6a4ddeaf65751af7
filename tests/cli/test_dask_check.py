"""The commands that read a fit answer xarray's "is this a dask array?" without importing
dask.array, and give the real answer once dask.array is imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from paths import ROOT

_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import xarray as xr
    from xarray.namedarray.pycompat import array_type
    from xarray.namedarray.utils import is_duck_dask_array
    from evalbayes.cli._dask_check import defer_dask_import

    defer_dask_import()
    data = xr.Dataset({"a": ("x", np.arange(4.0))})
    assert "dask.array" not in sys.modules, "dask.array imported"
    assert array_type("dask") == ()
    import dask.array as da
    assert array_type("dask") == (da.Array,)
    lazy = xr.DataArray(da.ones(4, chunks=2), dims="x")
    assert is_duck_dask_array(lazy.data) and lazy.chunks == ((2, 2),)
    assert float((lazy + data["a"]).sum()) == 10.0
    import dask
    from xarray.namedarray.pycompat import mod_version
    assert str(mod_version("dask")) == dask.__version__
    print("ok")
""")


def test_no_dask_array_import_until_asked_then_real_dask_arrays():
    result = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                            env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""}, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
