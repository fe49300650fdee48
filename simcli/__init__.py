"""simcli: rules-balance simulation for the Forecasts family of card games."""
__version__ = "0.1.0"
