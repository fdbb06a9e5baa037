"""One module per assignment, in course order, each defining its ASSIGNMENT."""
