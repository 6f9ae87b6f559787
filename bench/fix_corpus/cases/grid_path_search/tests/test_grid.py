from maze.grid import distance, find, neighbors, parse, shortest_path

MAZE = parse("""
S.#.
..#G
....
""")


def test_find():
    assert find(MAZE, "S") == (0, 0)
    assert find(MAZE, "G") == (1, 3)


def test_neighbors_skip_walls():
    assert sorted(neighbors(MAZE, (0, 1))) == [(0, 0), (1, 1)]


def test_shortest_path_around_wall():
    path = shortest_path(MAZE, (0, 0), (1, 3))
    assert path is not None
    assert path[0] == (0, 0)
    assert path[-1] == (1, 3)
    assert len(path) == 7


def test_distance():
    assert distance(["...", "..."], (0, 0), (1, 2)) == 3


def test_start_is_goal():
    start = (2, 2)
    assert shortest_path(MAZE, start, start) == [(2, 2)]


def test_unreachable():
    assert shortest_path([".#."], (0, 0), (0, 2)) is None
