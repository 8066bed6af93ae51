"""REST API (Django REST framework) over the review services; mounted at ``/api/`` (see docs/api.md)."""
