"""Breadth-first search on character grids ('#' is a wall)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence

Cell = tuple[int, int]
Grid = Sequence[str]


def parse(text: str) -> list[str]:
    return [line for line in text.strip("\n").splitlines() if line]


def find(grid: Grid, char: str) -> Cell:
    for row, line in enumerate(grid):
        col = line.find(char)
        if col >= 0:
            return (row, col)
    raise ValueError(f"{char!r} not in grid")


def neighbors(grid: Grid, cell: Cell) -> Iterator[Cell]:
    row, col = cell
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        r, c = row + dr, col + dc
        if 0 <= r < len(grid) and 0 <= c < len(grid[r]) and grid[r][c] != "#":
            yield (r, c)


def shortest_path(grid: Grid, start: Cell, goal: Cell) -> list[Cell] | None:
    """Cells from start to goal inclusive, or None when the goal cannot be reached."""
    came_from: dict[Cell, Cell | None] = {start: None}
    frontier = deque([start])
    while frontier:
        current = frontier.popleft()
        if current is goal:
            path = [current]
            while (previous := came_from[path[-1]]) is not None:
                path.append(previous)
            return path[::-1]
        for nxt in neighbors(grid, current):
            if nxt not in came_from:
                came_from[nxt] = current
                frontier.append(nxt)
    return None


def distance(grid: Grid, start: Cell, goal: Cell) -> int:
    path = shortest_path(grid, start, goal)
    return -1 if path is None else len(path) - 1
