"""Rating files and the features built from them, for real-data worlds.

Readers for MovieLens and Yelp files (`read_ratings`, nothing is downloaded),
the most active part of the rating matrix (`top_matrix`), truncated-SVD
features (`svd_features`) and k-means (`kmeans`).  The world built from them
is `privbandit.envs.ratings_environment`.
"""
from .features import kmeans, svd_features, top_matrix
from .ratings import FORMATS, Ratings, infer_format, read_ratings

__all__ = [
    "FORMATS", "Ratings", "infer_format", "kmeans", "read_ratings", "svd_features", "top_matrix",
]
