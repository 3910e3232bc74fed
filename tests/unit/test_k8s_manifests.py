"""The manifests in k8s/: KubeRay resources against the CRD schemas kept in k8s/crds/, the core
ones structurally, and the path a sweep's runs.parquet takes back (entrypoint -> head volume ->
results claim -> reader pod), with the image the manifests run."""

from __future__ import annotations

import copy
import functools
import hashlib
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "k8s"
CRDS = K8S / "crds"
# the CRDs are megabytes of YAML: libyaml reads them in a fraction of the pure-Python time
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QUANTITY = re.compile(r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                      r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
ACCESS_MODES = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.load_all(path.read_text(), Loader=_LOADER) if doc is not None]


@functools.cache
def _manifests() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(file name, document) for every document of k8s/*.yaml; callers that change one copy it."""
    return tuple((path.name, doc) for path in sorted(K8S.glob("*.yaml")) for doc in _documents(path))


def _only(kind: str) -> dict[str, Any]:
    found = [doc for _, doc in _manifests() if doc.get("kind") == kind]
    assert len(found) == 1, f"expected one {kind} in k8s/*.yaml, found {len(found)}"
    return found[0]


# --- Kubernetes schemas as jsonschema sees them -------------------------------------------------

def _int_or_string(validator: Any, marked: bool, instance: Any, schema: dict[str, Any]
                   ) -> Iterator[jsonschema.ValidationError]:
    if marked and (isinstance(instance, bool) or not isinstance(instance, int | str)):
        yield jsonschema.ValidationError(f"{instance!r} is neither an integer nor a string")


# jsonschema skips keywords it does not know, so a field marked only int-or-string would take anything
KubeValidator = jsonschema.validators.extend(
    jsonschema.Draft4Validator, {"x-kubernetes-int-or-string": _int_or_string})


def strict(schema: Any) -> Any:
    """The schema with unnamed fields refused where Kubernetes refuses them: kubectl's default
    (--validate=strict) fails on a field the schema does not name, which jsonschema would allow."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if "properties" in out:
        out["properties"] = {name: strict(sub) for name, sub in out["properties"].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), dict):
            out[key] = strict(out[key])
    for key in ("allOf", "anyOf", "oneOf"):
        if key in out:
            out[key] = [strict(sub) for sub in out[key]]
    if out.get("x-kubernetes-embedded-resource"):
        out["properties"] = {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                             "metadata": {"type": "object"}, **out.get("properties", {})}
    if ("properties" in out and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


@functools.cache
def _crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> the openAPIV3Schema of each served version in k8s/crds/."""
    found = {}
    for path in sorted(CRDS.glob("*.yaml")):
        for crd in _documents(path):
            if crd.get("kind") != "CustomResourceDefinition":
                continue
            group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
            for version in crd["spec"]["versions"]:
                if version.get("served"):
                    found[(f"{group}/{version['name']}", kind)] = version["schema"]["openAPIV3Schema"]
    return found


@functools.cache
def _validator(api_version: str, kind: str) -> Any:
    schema = _crd_schemas().get((api_version, kind))
    assert schema is not None, f"no served CRD version for {api_version} {kind} in k8s/crds/"
    return KubeValidator(strict(schema))


def _schema_errors(doc: dict[str, Any]) -> list[str]:
    errors = _validator(doc["apiVersion"], doc["kind"]).iter_errors(doc)
    return sorted(f"{e.json_path}: {e.message}" for e in errors)


def test_kubernetes_schema_keywords_are_enforced() -> None:
    marked_only = {"x-kubernetes-int-or-string": True}
    assert jsonschema.Draft4Validator(marked_only).is_valid([1])  # why KubeValidator exists
    for good in (1, "1", "500m"):
        assert KubeValidator(marked_only).is_valid(good)
    for bad in ([1], True, 1.5, None):
        assert not KubeValidator(marked_only).is_valid(bad)

    named = {"type": "object", "properties": {"known": {"type": "string"}}}
    assert not KubeValidator(strict(named)).is_valid({"typo": "x"})
    assert KubeValidator(strict({**named, "x-kubernetes-preserve-unknown-fields": True})
                         ).is_valid({"typo": "x"})
    assert KubeValidator(strict({**named, "x-kubernetes-embedded-resource": True})
                         ).is_valid({"kind": "Pod", "apiVersion": "v1", "metadata": {}})


# --- the CRDs and the manifests against them ----------------------------------------------------

def test_crds_are_the_recorded_upstream_files() -> None:
    recorded = dict(re.findall(r"^\| (ray\.io_\w+\.yaml) \| ([0-9a-f]{40}) \|$",
                               (CRDS / "README.md").read_text(), re.MULTILINE))
    assert set(recorded) == {"ray.io_rayclusters.yaml", "ray.io_rayjobs.yaml"}
    for name, blob in recorded.items():
        data = (CRDS / name).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, (
            f"k8s/crds/{name} differs from the upstream file README.md names")
    assert {("ray.io/v1", "RayCluster"), ("ray.io/v1", "RayJob")} <= set(_crd_schemas())


def test_every_expected_manifest_is_there() -> None:
    kinds = sorted(doc.get("kind", "?") for _, doc in _manifests())
    assert kinds == ["PersistentVolumeClaim", "Pod", "RayCluster", "RayJob"]


@pytest.mark.parametrize("doc", [doc for _, doc in _manifests() if doc.get("apiVersion", "").startswith(
    "ray.io/")], ids=lambda doc: doc.get("kind", "?"))
def test_kuberay_manifest_matches_its_crd(doc: dict[str, Any]) -> None:
    assert _schema_errors(doc) == []


def _head_spec(cluster_spec: dict[str, Any]) -> dict[str, Any]:
    return cluster_spec["headGroupSpec"]["template"]["spec"]


MUTATIONS = {
    "string for a boolean": (lambda job: job["spec"].update(shutdownAfterJobFinishes="yes"),
                             "$.spec.shutdownAfterJobFinishes"),
    "misspelt field": (lambda job: job["spec"].update(shutdownAfterJobFinish=True), "$.spec"),
    "quantity unit": (lambda job: _head_spec(job["spec"]["rayClusterSpec"])["containers"][0]
                      ["resources"]["limits"].update(memory="8GB"),
                      "$.spec.rayClusterSpec.headGroupSpec.template.spec.containers[0]"
                      ".resources.limits.memory"),
    "list for int-or-string": (lambda job: job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
                               ["template"]["spec"]["containers"][0]["resources"]["requests"]
                               .update(cpu=[4]),
                               "$.spec.rayClusterSpec.workerGroupSpecs[0].template.spec"
                               ".containers[0].resources.requests.cpu"),
    "required field gone": (lambda job: job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
                            .pop("groupName"), "$.spec.rayClusterSpec.workerGroupSpecs[0]"),
}


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_a_broken_rayjob_is_refused(mutation: str) -> None:
    change, where = MUTATIONS[mutation]
    job = copy.deepcopy(_only("RayJob"))
    assert _schema_errors(job) == []
    change(job)
    errors = _schema_errors(job)
    assert errors, f"{mutation}: accepted"
    assert all(e.startswith(f"{where}: ") for e in errors), errors


# --- the core manifests ---------------------------------------------------------------------------

def _cluster_spec(doc: dict[str, Any]) -> dict[str, Any] | None:
    if doc.get("kind") == "RayCluster":
        return doc["spec"]
    if doc.get("kind") == "RayJob":
        return doc["spec"].get("rayClusterSpec")
    return None


def _pod_specs() -> Iterator[tuple[str, dict[str, Any]]]:
    for file, doc in _manifests():
        if doc["kind"] == "Pod":
            yield file, doc["spec"]
        cluster = _cluster_spec(doc)
        if cluster:
            yield f"{file} head", _head_spec(cluster)
            for group in cluster.get("workerGroupSpecs", []):
                yield f"{file} {group['groupName']}", group["template"]["spec"]


def test_core_manifests_are_well_formed() -> None:
    for file, doc in _manifests():
        name = doc.get("metadata", {}).get("name", "")
        assert DNS_SUBDOMAIN.match(name) and len(name) <= 253, f"{file}: metadata.name {name!r}"
    claim = _only("PersistentVolumeClaim")
    assert claim["apiVersion"] == "v1"
    assert claim["spec"]["accessModes"] and set(claim["spec"]["accessModes"]) <= ACCESS_MODES
    assert QUANTITY.match(str(claim["spec"]["resources"]["requests"]["storage"]))
    pod = _only("Pod")
    assert pod["apiVersion"] == "v1"
    assert all(c.get("name") and c.get("image") for c in pod["spec"]["containers"])


def test_pods_mount_only_volumes_they_declare() -> None:
    for where, spec in _pod_specs():
        declared = {volume["name"] for volume in spec.get("volumes", [])}
        for container in spec["containers"]:
            for mount in container.get("volumeMounts", []):
                assert mount["name"] in declared, f"{where}: mounts undeclared {mount['name']!r}"


def test_images_name_no_registry_host() -> None:
    # the project names no registry; users tag and push to theirs
    for where, spec in _pod_specs():
        for container in spec["containers"]:
            image = container["image"]
            host = image.split("/")[0] if "/" in image else ""
            assert not ("." in host or ":" in host or host == "localhost"), f"{where}: {image}"


def _cpus(quantity: int | str) -> float:
    text = str(quantity)
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def test_ray_num_cpus_match_the_cpu_limits() -> None:
    # Ray would otherwise count the node's cores and overcommit the container's quota
    for file, doc in _manifests():
        cluster = _cluster_spec(doc)
        if not cluster:
            continue
        groups = [cluster["headGroupSpec"], *cluster.get("workerGroupSpecs", [])]
        for group in groups:
            limit = group["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"]
            assert _cpus(group["rayStartParams"]["num-cpus"]) == _cpus(limit), file


def test_the_rayjob_runs_the_long_lived_clusters_spec() -> None:
    assert _only("RayJob")["spec"]["rayClusterSpec"] == _only("RayCluster")["spec"]


# --- how a sweep's outputs come back ------------------------------------------------------------

@dataclass(frozen=True)
class Sweep:
    experiment: PurePosixPath
    out: PurePosixPath


def _sweep_command(entrypoint: str) -> Sweep:
    words = shlex.split(entrypoint)
    starts = [i for i in range(len(words) - 1) if words[i:i + 2] == ["synthorg", "sweep"]]
    assert starts, f"no `synthorg sweep` in {entrypoint!r}"
    args = words[starts[0] + 2:]
    outs = [args[i + 1] for i, word in enumerate(args[:-1]) if word == "--out"]
    outs += [word.removeprefix("--out=") for word in args if word.startswith("--out=")]
    assert len(outs) == 1, f"one --out expected in {entrypoint!r}"
    positional = [word for word in args if not word.startswith("-")]
    return Sweep(experiment=PurePosixPath(positional[0]), out=PurePosixPath(outs[0]))


def test_sweep_command_parsing() -> None:
    sweep = _sweep_command("env X=1 synthorg sweep exp.yaml --out=/r/a --address auto")
    assert sweep == Sweep(PurePosixPath("exp.yaml"), PurePosixPath("/r/a"))
    with pytest.raises(AssertionError):
        _sweep_command("synthorg tune study.yaml --out /r/a")


def test_the_rayjob_entrypoint_is_one_plain_command() -> None:
    # KubeRay pastes the entrypoint unquoted into its submitter's `bash -c` line: after a `&&`
    # or `;` the rest would run in the submitter pod, not as the Ray job
    lexer = shlex.shlex(_only("RayJob")["spec"]["entrypoint"], posix=True, punctuation_chars=True)
    operators = [token for token in lexer if set(token) <= set("();<>|&")]
    assert operators == []


def test_runs_parquet_reaches_the_results_claim_and_the_reader() -> None:
    sweep = _sweep_command(_only("RayJob")["spec"]["entrypoint"])
    assert sweep.out.is_absolute(), "--out relative to a job's working dir is nowhere known"
    claim = _only("PersistentVolumeClaim")["metadata"]["name"]

    def claim_mounted_over(spec: dict[str, Any], path: PurePosixPath) -> str | None:
        volumes = {volume["name"]: volume for volume in spec.get("volumes", [])}
        for mount in spec["containers"][0].get("volumeMounts", []):
            if path.is_relative_to(mount["mountPath"]):
                return volumes[mount["name"]].get("persistentVolumeClaim", {}).get("claimName")
        return None

    # the entrypoint runs on the head, so that is where --out must be on the claim
    assert claim_mounted_over(_head_spec(_only("RayJob")["spec"]["rayClusterSpec"]), sweep.out) == claim
    assert claim_mounted_over(_head_spec(_only("RayCluster")["spec"]), sweep.out) == claim
    assert claim_mounted_over(_only("Pod")["spec"], sweep.out) == claim


# --- the image ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Dockerfile:
    base: str
    workdir: PurePosixPath
    copied: tuple[tuple[PurePosixPath, Path], ...]  # (path in the image, path in the repo)

    def repo_path(self, image_path: PurePosixPath) -> Path | None:
        for in_image, in_repo in self.copied:
            if image_path.is_relative_to(in_image):
                return in_repo / image_path.relative_to(in_image)
        return None


@functools.cache
def _dockerfile() -> Dockerfile:
    text = re.sub(r"\\\n", " ", (K8S / "Dockerfile").read_text())
    args: dict[str, str] = {}
    base, workdir, copied = "", PurePosixPath("/"), []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        instruction, _, rest = line.strip().partition(" ")
        words = rest.split()
        match instruction.upper():
            case "ARG" if "=" in rest:
                name, _, default = rest.strip().partition("=")
                args.setdefault(name, default)
            case "FROM":
                base = re.sub(r"\$\{?(\w+)\}?", lambda m: args[m.group(1)], words[0])
            case "WORKDIR":
                workdir = workdir / words[0]
            case "COPY":
                *sources, dest = [word for word in words if not word.startswith("--")]
                for source in sources:
                    target = workdir / dest
                    if dest.endswith("/") and not (ROOT / source).is_dir():
                        target = target / PurePosixPath(source).name
                    copied.append((target, ROOT / source))
    return Dockerfile(base=base, workdir=workdir, copied=tuple(copied))


def test_dockerfile_parsing_maps_image_paths_to_the_repo() -> None:
    dockerfile = _dockerfile()
    assert dockerfile.repo_path(dockerfile.workdir / "pyproject.toml") == ROOT / "pyproject.toml"
    assert dockerfile.repo_path(PurePosixPath("/etc/passwd")) is None


def test_the_experiment_the_sweep_names_is_in_the_image() -> None:
    experiment = _sweep_command(_only("RayJob")["spec"]["entrypoint"]).experiment
    assert experiment.is_absolute(), "a path relative to a job's working dir is nowhere known"
    in_repo = _dockerfile().repo_path(experiment)
    assert in_repo is not None, f"{experiment} is not a path k8s/Dockerfile copies into the image"
    assert in_repo.is_file(), f"{in_repo.relative_to(ROOT)} (the image's {experiment}) is missing"


def _image_ray_version() -> str:
    found = re.fullmatch(r"rayproject/ray:(\d+\.\d+\.\d+)-py3\d+", _dockerfile().base)
    assert found, f"FROM {_dockerfile().base}: expected rayproject/ray:X.Y.Z-py3NN"
    return found.group(1)


def test_the_image_ray_is_the_installed_ray() -> None:
    ray = pytest.importorskip("ray")
    # Ray Client and job submission from this venv need the cluster on the same Ray
    assert _image_ray_version().split(".")[:2] == ray.__version__.split(".")[:2]


def test_the_manifests_ray_version_is_the_images() -> None:
    for file, doc in _manifests():
        cluster = _cluster_spec(doc)
        if cluster:
            assert cluster.get("rayVersion") == _image_ray_version(), file
