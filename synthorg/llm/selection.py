"""Which agents reason with the model (config `llm.agents`): a hybrid population."""

from __future__ import annotations

import numpy as np

from synthorg.config.models import CompanyConfig
from synthorg.domain.enums import Seniority
from synthorg.domain.rng import Stream, uniform
from synthorg.org.directory import OrgDirectory


def llm_agents(cfg: CompanyConfig, directory: OrgDirectory, key: np.uint64) -> np.ndarray:
    """Per slot, whether the agent deliberates with the model: those matching every
    criterion, then a seeded fraction of them (drawn per slot, so a hire or a move does not
    reshuffle anyone else), then the first `max_agents` by slot."""
    spec = cfg.llm.agents
    n = len(directory.agent_ids)
    chosen = np.full(n, cfg.llm.enabled, dtype=bool)
    if not cfg.llm.enabled:
        return chosen
    if spec.departments:
        depts = [directory.dept_ids.index(d) for d in spec.departments]
        chosen &= np.isin(directory.agent_dept, depts)
    if spec.roles:
        roles = [directory.role_ids.index(r) for r in spec.roles]
        chosen &= np.isin(directory.agent_role, roles)
    if spec.seniority:
        chosen &= np.isin(directory.seniority, [int(Seniority[s]) for s in spec.seniority])
    if spec.ids:
        wanted = set(spec.ids)
        chosen &= np.fromiter((a in wanted for a in directory.agent_ids), dtype=bool, count=n)
    if spec.fraction < 1.0:
        chosen &= uniform(key, np.arange(n), 0, Stream.llm) < spec.fraction
    if spec.max_agents is not None:
        chosen &= np.cumsum(chosen) <= spec.max_agents
    return chosen
