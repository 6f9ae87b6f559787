from memo.last_call import memoize_last


def make():
    calls = []

    @memoize_last
    def render(width, height, *, theme="light"):
        """Render a chart."""
        calls.append((width, height, theme))
        return f"{width}x{height}:{theme}"

    return render, calls


def test_first_call_computes():
    render, calls = make()
    assert render(3, 4) == "3x4:light"
    assert len(calls) == 1


def test_repeated_call_is_cached():
    render, calls = make()
    render(3, 4)
    render(3, 4)
    assert len(calls) == 1
    assert render.hits == 1


def test_keyword_order_does_not_matter():
    render, calls = make()
    render(width=3, height=4)
    render(height=4, width=3)
    assert len(calls) == 1


def test_different_arguments_recompute():
    render, _ = make()
    render(3, 4)
    render(5, 4)
    render(3, 4)
    assert render.misses == 3


def test_clear():
    render, calls = make()
    render(1, 1)
    render.clear()
    render(1, 1)
    assert len(calls) == 2


def test_wraps_metadata():
    render, _ = make()
    assert render.__doc__ == "Render a chart."
