"""reportgen: declarative fairness reports with honest uncertainty."""

__version__ = "0.1.0"
