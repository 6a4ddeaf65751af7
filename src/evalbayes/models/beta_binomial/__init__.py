"""The Beta-Binomial family: ``p[s, t] ~ Beta(mu[s] kappa[s], (1 - mu[s]) kappa[s])``,
``c ~ Binomial(n, p)``, sampled collapsed (exactly by quadrature where the systems are
independent), with Rao-Blackwellised pass@k / pass^k curves (a compiled kernel for the
"tasks" estimand). The default model for one system.
"""

from evalbayes.models.beta_binomial._exact import GridPosterior, exact_posterior
from evalbayes.models.beta_binomial._model import BetaBinomialModel

__all__ = ["BetaBinomialModel", "GridPosterior", "exact_posterior"]
