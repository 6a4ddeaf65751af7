"""The JAX path: method="numpyro" for both model families on CPU, the dense IRT under JAX, and
benchmarks/irt/gpu_irt.py at tiny sizes. Skipped cleanly where the optional JAX extra is absent."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evalbayes.data import EvalData
from paths import ROOT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numpyro") is None or importlib.util.find_spec("jax") is None,
    reason="the optional JAX extra (jax, numpyro) is not installed",
)


def _data(seed: int = 0) -> EvalData:
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 5, (4, 9))
    n[0, 2] = 0
    c = rng.binomial(n, np.linspace(0.1, 0.9, 9)[None, :])
    return EvalData.from_arrays(n, c)


@pytest.mark.parametrize("name", ["beta-binomial", "irt-2pl-dense"])
def test_numpyro_method_fits_both_models(name):
    from evalbayes.models import get_model
    from evalbayes.models.irt._model import IRTModel

    model = IRTModel(kind="2pl", layout="dense") if name == "irt-2pl-dense" else get_model(name)
    post = model.fit(_data(), method="numpyro", draws=60, tune=60, chains=2, seed=1,
                     check=False)
    assert post.sampler.method == "numpyro" and post.is_mcmc and not post.approximate
    var = "theta" if name.startswith("irt") else next(iter(post.posterior.data_vars))
    assert post.posterior[var].sizes["chain"] == 2 and post.posterior[var].sizes["draw"] == 60
    assert np.isfinite(post.posterior[var].values).all()


def test_dense_jax_log_density_equals_pytensor():
    """The JAX-compiled dense log density equals pytensor's (C backend) at random points."""
    import jax
    from pymc.model.transform.optimization import freeze_dims_and_data
    from pymc.sampling.jax import get_jaxified_logp

    from evalbayes.models.irt._model import IRTModel

    model = IRTModel(kind="2pl", layout="dense")
    pm_model = freeze_dims_and_data(model.build(model.inputs(_data())))
    jax_logp = jax.jit(get_jaxified_logp(pm_model))
    c_logp = pm_model.compile_logp()
    rng = np.random.default_rng(0)
    for _ in range(3):
        point = {k: v + rng.normal(0, 0.5, np.shape(v))
                 for k, v in pm_model.initial_point().items()}
        np.testing.assert_allclose(float(jax_logp(list(point.values()))), c_logp(point),
                                   rtol=1e-6)


def test_gpu_script_runs_at_tiny_size():
    """benchmarks/irt/gpu_irt.py on whatever device JAX has (CPU here), tiny sizes."""
    cmd = [sys.executable, str(ROOT / "benchmarks" / "irt" / "gpu_irt.py"), "--systems", "5",
           "--tasks", "12", "--draws", "30", "--tune", "30", "--chains", "2", "--evals", "3"]
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin",
           "HOME": str(Path.home())}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "device:" in out.stdout and "ms per gradient" in out.stdout
    assert "NUTS 2 x (30 + 30)" in out.stdout


def test_numpyro_fit_runs_one_cpu_device_per_chain():
    # In a fresh process (JAX not yet imported), method="numpyro" must give numpyro one host
    # device per chain, so the chains run in parallel on CPU rather than in sequence.
    script = (
        "import os\n"
        "os.environ.pop('XLA_FLAGS', None)\n"
        "import numpy as np\n"
        "from evalbayes.data import EvalData\n"
        "from evalbayes.models import get_model\n"
        "data = EvalData.from_arrays(np.full((2, 5), 4), np.array([[1, 2, 3, 4, 0]] * 2))\n"
        "get_model('beta-binomial').fit(data, method='numpyro', draws=20, tune=20, chains=3,"
        " seed=0, check=False)\n"
        "import jax\n"
        "print(jax.local_device_count(), os.environ['XLA_FLAGS'])\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    assert out.split()[0] == "3", out


def test_registered_jax_softplus_matches_pytensor_and_has_sigmoid_gradient():
    # The one-exponential translation must equal pytensor's own softplus (NumPy impl) in both
    # tails and in between, and its JAX gradient must be the logistic function.
    import jax
    import jax.numpy as jnp
    import pytensor
    import pytensor.tensor as pt
    from scipy.special import expit

    from evalbayes.inference import register_jax_softplus

    register_jax_softplus()
    x = np.array([-800.0, -40.0, -37.5, -5.0, -1e-9, 0.0, 1e-9, 3.0, 17.9, 18.1, 33.0, 40.0,
                  800.0])
    v = pt.dvector("v")
    reference = pytensor.function([v], pt.softplus(v), mode="FAST_COMPILE")(x)
    jaxed = pytensor.function([v], pt.softplus(v), mode="JAX")(x)
    np.testing.assert_allclose(jaxed, reference, rtol=1e-14, atol=1e-300)
    from pytensor.link.jax.dispatch import jax_funcify
    from pytensor.scalar import Softplus

    softplus = jax_funcify(Softplus(pytensor.scalar.upgrade_to_float))
    grad = jax.vmap(jax.grad(lambda t: softplus(t)))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(grad), expit(x), rtol=1e-14, atol=1e-300)
