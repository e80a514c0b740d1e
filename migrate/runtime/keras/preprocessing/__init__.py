"""`keras.preprocessing`: Keras 1's image and text preprocessing (`ImageDataGenerator`, `Tokenizer`),
ported from Keras 3's legacy modules."""

from . import image, text

__all__ = ["image", "text"]
