from nlp.keywords import content_words, density, ngrams, tokenize, top_keywords


def test_tokenize():
    assert tokenize("It's the cat's hat, 2 times!") == ["it's", "the", "cat's", "hat", "2", "times"]


def test_content_words_drop_stopwords():
    assert content_words("The cat and the hat") == ["cat", "hat"]


def test_top_keywords():
    text = "Python packaging: the wheel, the sdist and the wheel cache"
    assert top_keywords(text, 2) == [("wheel", 2), ("python", 1)]


def test_ngrams():
    assert ngrams(["a", "b", "c"], 2) == [("a", "b"), ("b", "c")]
    assert ngrams(["a"], 2) == []


def test_density():
    assert density("the cat and the hat", "THE") == 0.4
    assert density("", "the") == 0.0
