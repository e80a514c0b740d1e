"""`tf.keras.layers` on MindSpore Cells (Keras constructor arguments, defaults and layouts)."""

from ..symbolic import Input
from .attention import AdditiveAttention, Attention
from .augmentation import RandomFlip, RandomRotation, RandomZoom
from .base import Layer
from .input_spec import InputSpec
from .convolution import (Conv1D, Conv2D, Conv2DTranspose, Conv3D, Conv3DTranspose, Convolution1D, Convolution2D,
                          Convolution2DTranspose, Convolution3D, Convolution3DTranspose,
                          DepthwiseConv2D, SeparableConv2D, SeparableConvolution2D, UpSampling1D, UpSampling2D,
                          UpSampling3D)
from .core import (Activation, AlphaDropout, Dense, Dropout, Embedding, Flatten, Identity, InputLayer, Lambda, LeakyReLU, Masking, Permute,
                   PReLU, ReLU, Rescaling, Resizing, ZeroPadding2D, RepeatVector, Reshape, Softmax, SpatialDropout1D, SpatialDropout2D,
                   TensorOperation)
from .merging import (Add, Average, Concatenate, Maximum, Minimum, Multiply, Subtract, add, average, concatenate,
                      maximum, minimum, multiply, subtract)
from .lookup import CategoryEncoding, IntegerLookup, StringLookup, TextVectorization
from .normalization import BatchNormalization, LayerNormalization, Normalization, SyncBatchNormalization
from .recurrent import (GRU, LSTM, RNN, Bidirectional, GRUCell, LSTMCell, SimpleRNN, SimpleRNNCell, StackedRNNCells,
                        TimeDistributed)
from .pooling import (AveragePooling1D, AveragePooling2D, AveragePooling3D, AvgPool1D, AvgPool2D, AvgPool3D,
                      GlobalAveragePooling1D, GlobalAveragePooling2D, GlobalAveragePooling3D, GlobalAvgPool1D,
                      GlobalAvgPool2D, GlobalAvgPool3D, GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D,
                      GlobalMaxPooling1D, GlobalMaxPooling2D, GlobalMaxPooling3D, MaxPool1D, MaxPool2D, MaxPool3D,
                      MaxPooling1D, MaxPooling2D, MaxPooling3D)

__all__ = [
    "Input", "Layer", "InputLayer", "Dense", "Activation", "Dropout", "AlphaDropout", "Rescaling", "Resizing",
    "ZeroPadding2D", "SpatialDropout1D", "SpatialDropout2D",
    "Flatten", "Reshape", "Permute", "RepeatVector", "Embedding", "Lambda", "Identity", "ReLU", "LeakyReLU", "PReLU",
    "Softmax", "Conv1D", "Conv2D", "Convolution1D", "Convolution2D", "Conv2DTranspose", "Convolution2DTranspose", "DepthwiseConv2D", "SeparableConv2D", "SeparableConvolution2D",
    "UpSampling1D", "UpSampling2D", "UpSampling3D", "MaxPooling1D", "MaxPooling2D",
    "AveragePooling1D", "AveragePooling2D", "MaxPool1D", "MaxPool2D", "AvgPool1D", "AvgPool2D",
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D", "GlobalMaxPooling2D",
    "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalMaxPool1D", "GlobalMaxPool2D", "BatchNormalization", "SyncBatchNormalization",
    "LayerNormalization", "Normalization", "Concatenate", "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum",
    "concatenate", "add", "subtract", "multiply", "average", "maximum", "minimum", "SimpleRNN", "GRU", "LSTM", "Bidirectional", "Masking", "RNN", "SimpleRNNCell", "GRUCell", "LSTMCell",
    "StackedRNNCells", "TimeDistributed", "Conv3D", "Convolution3D", "Conv3DTranspose", "Convolution3DTranspose", "MaxPooling3D", "AveragePooling3D", "MaxPool3D",
    "AvgPool3D", "GlobalAveragePooling3D", "GlobalMaxPooling3D", "GlobalAvgPool3D", "GlobalMaxPool3D",
    "StringLookup", "IntegerLookup", "TextVectorization", "CategoryEncoding", "RandomFlip", "RandomRotation", "RandomZoom",
    "Attention", "AdditiveAttention", "InputSpec",
]
