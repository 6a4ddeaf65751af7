"""The private core (NumPy only, the bottom floor): the vocabulary and its one validator per
rule (:mod:`~evalbayes._core.names`), credible intervals and the rendering protocol shared by
every result. Not an API: the public names built on it are re-exported by the packages above.
"""
