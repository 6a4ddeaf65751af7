"""``evalbayes report``: one self-contained HTML file (or Markdown with image files).

Sections: data overview (coverage, flaky / saturated / small-suite flags, intra-task
correlation and design effect); pass@1 per system with the posterior for both estimands
beside the unbiased estimate, Wilson and task-bootstrap intervals; pass@k and pass^k bands;
the P(B > A) matrix and the Bayesian and frequentist verdicts side by side with the minimum
detectable effect; items (IRT fits); diagnostics and the posterior predictive check; the
stated harness and protocol; how to read it. See ``docs/report.md``.
"""

from evalbayes.report._build import build_report, markdown_path, write_report
from evalbayes.report._meta import ProtocolMeta, read_meta

__all__ = ["ProtocolMeta", "build_report", "markdown_path", "read_meta", "write_report"]
