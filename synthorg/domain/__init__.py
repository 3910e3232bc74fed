"""Domain values of an organisation: enums, frozen values, columnar records, seeded draws."""
