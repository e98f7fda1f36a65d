"""Which form each output writes each column type with: the data of output/forms.py (which
explains it and makes the per-table plans), kept here, below both the outputs and the code
generators, so that codegen/c_rows.py reads the same table to write the compiled backend's forms.
"""
from __future__ import annotations

__all__ = ["FORMS"]

FORMS = {
    "vv": {
        "TINY": "int_signed_width", "SHORT": "int_signed_width", "INT24": "int_signed_width",
        "LONG": "int_signed_width", "LONGLONG": "int_signed_width",
        "NEWDECIMAL": "decimal_digits",
        "FLOAT": "float_left20g", "DOUBLE": "double_g20",
        "YEAR": "year_1900",
        "DATE": "date_colon", "NEWDATE": "date_colon",
        "DATETIME": "datetime", "DATETIME2": "datetime_fsp",
        "TIMESTAMP": "epoch_seconds", "TIMESTAMP2": "epoch_fsp",
        "TIME": "time", "TIME2": "time_fsp",
        "BIT": "bits", "ENUM": "enum_index", "SET": "set_bits",
        "JSON": "json_text_quoted", "VECTOR": "vector_bytes",
        "*": "quoted_bytes",
    },
    "jsonl": {
        "TINY": "number", "SHORT": "number", "INT24": "number", "LONG": "number",
        "LONGLONG": "number", "YEAR": "number", "BIT": "number",
        "NEWDECIMAL": "decimal_string",
        "FLOAT": "float_number", "DOUBLE": "float_number",
        "DATE": "iso_date", "NEWDATE": "iso_date",
        "DATETIME": "iso_datetime", "DATETIME2": "iso_datetime",
        "TIMESTAMP": "iso_datetime", "TIMESTAMP2": "iso_datetime",
        "TIME": "iso_time", "TIME2": "iso_time",
        "ENUM": "member", "SET": "members",
        "GEOMETRY": "geometry",
        "JSON": "json_document",
        "@string_columns": "text",
        "*": "value",
    },
    "debezium": {  # output/debezium_values.py DEBEZIUM_FORMS (--envelope debezium)
        "TINY": "int", "SHORT": "int", "INT24": "int", "LONG": "int", "YEAR": "year",
        "LONGLONG": "bigint", "NEWDECIMAL": "decimal",
        "FLOAT": "float32", "DOUBLE": "float64",
        "DATE": "epoch_days", "NEWDATE": "epoch_days",
        "DATETIME": "datetime", "DATETIME2": "datetime",
        "TIMESTAMP": "zoned_timestamp", "TIMESTAMP2": "zoned_timestamp",
        "TIME": "micro_time", "TIME2": "micro_time",
        "BIT": "bits", "ENUM": "enum", "SET": "enum_set",
        "GEOMETRY": "geometry", "JSON": "json",
        "@string_columns": "string",
        "*": "value",
    },
}
