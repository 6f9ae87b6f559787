from reviews.ratings import RatingSummary, Review


def summary(*stars: int) -> RatingSummary:
    return RatingSummary(Review(f"user{i}", s) for i, s in enumerate(stars))


def test_average_of_equal_ratings():
    assert summary(4, 4, 4).average() == 4.0


def test_average_keeps_fraction():
    assert summary(5, 4).average() == 4.5


def test_empty_average():
    assert summary().average() == 0.0


def test_invalid_ratings_ignored():
    assert summary(0, 6, 3).count == 1


def test_histogram():
    assert summary(5, 5, 1).histogram() == {5: 2, 4: 0, 3: 0, 2: 0, 1: 1}


def test_share_positive():
    assert summary(5, 4, 2, 1).share_positive() == 0.5


def test_stars_display_half_star():
    assert summary(5, 4).stars_display() == "****+"


def test_stars_display_whole():
    assert summary(3, 3).stars_display() == "***.."
