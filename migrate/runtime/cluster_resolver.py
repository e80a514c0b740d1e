"""`tf.distribute.cluster_resolver` counterparts."""

from .cluster import (ClusterResolver, ClusterSpec, GCEClusterResolver, KubernetesClusterResolver,
                      KubernetesExecutableLocation, SimpleClusterResolver, SlurmClusterResolver,
                      TFConfigClusterResolver, TPUClusterResolver, UnionResolver)

__all__ = ["ClusterResolver", "ClusterSpec", "SimpleClusterResolver", "TFConfigClusterResolver",
           "TPUClusterResolver", "UnionResolver", "SlurmClusterResolver", "KubernetesClusterResolver",
           "KubernetesExecutableLocation", "GCEClusterResolver"]
