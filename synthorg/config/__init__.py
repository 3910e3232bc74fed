"""Company configuration: frozen pydantic models and the YAML loader."""

from synthorg.config.loader import apply_overrides, load_config, load_config_text
from synthorg.config.models import CompanyConfig

__all__ = ["CompanyConfig", "apply_overrides", "load_config", "load_config_text"]
