from csvtools.table import column_widths, parse_csv, render_table, select_columns, to_records

CSV = "name,city\nAnn,Amsterdam\n\nBo,Ede\n"


def test_parse_csv_skips_blank_lines():
    assert parse_csv(CSV) == (["name", "city"], [["Ann", "Amsterdam"], ["Bo", "Ede"]])


def test_parse_pads_short_rows():
    assert parse_csv("a,b,c\n1\n")[1] == [["1", "", ""]]


def test_column_widths_use_longest_cell():
    header, rows = parse_csv(CSV)
    assert column_widths(header, rows) == [4, 9]


def test_render_table():
    header, rows = parse_csv(CSV)
    assert render_table(header, rows).splitlines() == [
        "name | city",
        "-----+----------",
        "Ann  | Amsterdam",
        "Bo   | Ede",
    ]


def test_select_columns():
    header, rows = parse_csv(CSV)
    assert select_columns(header, rows, ["city"]) == [["Amsterdam"], ["Ede"]]


def test_to_records():
    assert to_records(["a", "b"], [["1", "2"]]) == [{"a": "1", "b": "2"}]
