"""Order packages so that every package comes after its dependencies."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

Graph = Mapping[str, Iterable[str]]


class CycleError(Exception):
    pass


class MissingDependency(Exception):
    pass


def missing_dependencies(packages: Graph) -> list[str]:
    """Dependencies that are not themselves listed as packages."""
    return sorted({dep for deps in packages.values() for dep in deps if dep in packages})


def install_order(packages: Graph, *, strict: bool = False) -> list[str]:
    if strict and (missing := missing_dependencies(packages)):
        raise MissingDependency("not in the lock file: " + ", ".join(missing))
    order: list[str] = []
    done: set[str] = set()
    visiting: set[str] = set()

    def visit(name: str, chain: tuple[str, ...]) -> None:
        if name in done:
            return
        if name in visiting:
            raise CycleError(" -> ".join((*chain, name)))
        visiting.add(name)
        for dep in sorted(packages.get(name, ())):
            visit(dep, (*chain, name))
        visiting.discard(name)
        done.add(name)
        order.append(name)

    for name in sorted(packages):
        visit(name, ())
    return order


def dependents(packages: Graph, target: str) -> list[str]:
    """Packages that depend on ``target`` directly."""
    return sorted(name for name, deps in packages.items() if target in set(deps))
