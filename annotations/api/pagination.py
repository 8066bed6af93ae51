"""Page-number pagination: ``?page=N&page_size=M`` (default 25, at most 100 per page)."""

from rest_framework import pagination


class PageNumberPagination(pagination.PageNumberPagination):
    page_size = 25
    page_size_query_param = "page_size"
    max_page_size = 100
