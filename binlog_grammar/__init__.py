"""binlog-grammar: MySQL and MariaDB binary logs, parsed by structs generated from YAML specs."""

__version__ = "0.1.0"
