"""`tf.distribute.cluster_resolver` counterparts."""

from .cluster import (ClusterResolver, ClusterSpec, SimpleClusterResolver, TFConfigClusterResolver,
                      TPUClusterResolver)

__all__ = ["ClusterResolver", "ClusterSpec", "SimpleClusterResolver", "TFConfigClusterResolver",
           "TPUClusterResolver"]
