"""migrate: move TensorFlow tf.distribute training code onto MindSpore."""

__version__ = "0.1.0"
