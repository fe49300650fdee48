"""Configuration: jobs from configs/<game>.toml and flags, config-file schemas, the TOML reader."""
