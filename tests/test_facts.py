"""`gradients_mean` follows what the strategy's own scope trains with, by resolved names.

Keras `fit` averages replica gradients and a custom loop sums them, so a strategy is
converted with `gradients_mean=True` only where its function (or the file, for one made
at module level) trains a Keras model with `fit` and uses no tape. Rules declare which
APIs are Keras models and tapes (`facts:` in rules/); spelling decides nothing.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from migrate.engine.facts import Facts, find_facts
from tests.helpers import convert


def mean_of(source: str) -> list[bool]:
    """The ``gradients_mean`` of every strategy the conversion of ``source`` makes."""
    text, _ = convert(textwrap.dedent(source))
    return [part.split(",")[0].strip() == "True" for part in text.split("gradients_mean=")[1:]]


FIT_CASES = {
    "sequential_in_scope": ("""
        import tensorflow as tf
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
        model.fit(x, y)
        """, [True]),
    "model_from_a_factory_of_the_file": ("""
        import tensorflow as tf

        def build():
            inputs = tf.keras.Input(shape=(4,))
            model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(inputs))
            return model

        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            net = build()
        net.fit(x, y)
        """, [True]),
    "subclassed_model": ("""
        import tensorflow as tf

        class Base(tf.keras.Model):
            pass

        class Net(Base):
            def call(self, x):
                return x

        strategy = tf.distribute.MirroredStrategy()
        Net().fit(x, y)
        """, [True]),
    "model_kept_on_self": ("""
        from tensorflow import keras
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self.model = keras.Sequential([keras.layers.Dense(1)])

            def train(self):
                self.model.fit(x, y)

        strategy = tf.distribute.MirroredStrategy()
        """, [True]),
    "a_pretrained_application": ("""
        import tensorflow as tf
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            model = tf.keras.applications.ResNet50(weights=None)
        model.fit(x, y)
        """, [True]),
    "a_model_from_another_module_compiled_then_fit": ("""
        import tensorflow as tf
        import resnet_model
        strategy = tf.distribute.MirroredStrategy()
        with strategy.scope():
            model = resnet_model.ResNet50(num_classes=10)
            model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
        model.fit(dataset, epochs=2)
        """, [True]),
    "scikit_learn_fit_says_nothing": ("""
        import tensorflow as tf
        from sklearn.linear_model import LinearRegression
        strategy = tf.distribute.MirroredStrategy()
        baseline = LinearRegression().fit(x, y)
        scaler = make_scaler()
        scaler.fit(x)
        """, [False]),
    "a_tape_in_the_scope_wins": ("""
        import tensorflow as tf
        strategy = tf.distribute.MirroredStrategy()
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.fit(x, y)

        def step(x):
            with tf.GradientTape() as tape:
                loss = model(x)
            return tape.gradient(loss, model.trainable_variables)
        """, [False]),
    "a_tape_by_another_name_is_no_tape": ("""
        import tensorflow as tf
        from autograd_lib import GradientTape
        strategy = tf.distribute.MirroredStrategy()
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.fit(x, y)
        recorder = GradientTape()
        """, [True]),
    "a_function_the_scope_calls_counts": ("""
        import tensorflow as tf

        def train_small_model():
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(optimizer="sgd", loss="mse")
            model.fit(x, y)

        def test_mirrored():
            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                train_small_model()
        """, [True]),
    "each_strategy_sees_its_own_function": ("""
        import tensorflow as tf

        def keras_job():
            strategy = tf.distribute.MirroredStrategy()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.fit(x, y)

        def custom_job():
            strategy = tf.distribute.MirroredStrategy()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            with tf.GradientTape() as tape:
                loss = model(x)
            tape.gradient(loss, model.trainable_variables)
        """, [True, False]),
}


@pytest.mark.parametrize("name", FIT_CASES)
def test_gradients_mean_follows_what_the_strategy_scope_trains_with(name):
    source, expected = FIT_CASES[name]
    assert mean_of(source) == expected


def test_a_fit_the_pruner_sets_aside_still_counts():
    """Facts are read from the whole file: a long file's statements set aside count too."""
    source = (
        "import tensorflow as tf\n"
        + "".join(f"CONSTANT_{i} = {i}\n" for i in range(60))
        + "strategy = tf.distribute.MirroredStrategy()\n"
        "model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
        + "".join(f"print(CONSTANT_{i})\n" for i in range(20))
        + "model.fit(x, y)\n"
    )
    assert mean_of(source) == [True]


def test_facts_are_found_by_the_innermost_function_holding_a_line():
    facts = Facts(fits=[5], tapes=[12], functions=[(1, 8, "outer"), (3, 6, "inner"), (10, 14, "other")])
    assert facts.at(4).keras_fit and not facts.at(4).gradient_tape      # in (3, 6), which holds line 5
    assert facts.at(2).keras_fit                                        # (1, 8) holds (3, 6)
    assert facts.at(7) == facts.at(2)                                   # (1, 8) again
    assert facts.at(11).gradient_tape and not facts.at(11).keras_fit
    assert facts.at(9).keras_fit and facts.at(9).gradient_tape          # outside every function: the file


def test_facts_follow_the_calls_of_functions_of_the_file():
    facts = Facts(fits=[3], tapes=[], functions=[(1, 4, "train"), (6, 9, "main"), (11, 12, "unused")],
                  calls=[(8, "train"), (12, "main")])
    assert facts.at(7).keras_fit  # main calls train, which fits
    assert not facts.at(11).gradient_tape


def test_find_facts_resolves_names_it_is_given_only():
    tree = ast.parse("import tf_alias\nmodel = tf_alias.Seq()\nmodel.fit()\nwith T() as tape:\n    pass\n")
    quals = {"tf_alias": {"tensorflow.keras"}}

    def qual_of(node):
        if isinstance(node, ast.Name):
            return quals.get(node.id, set())
        if isinstance(node, ast.Attribute):
            return {f"{q}.{node.attr}" for q in qual_of(node.value)}
        return set()

    found = find_facts(tree, {"keras_model": frozenset({"tensorflow.keras.Seq"}), "gradient_tape": frozenset({"x.T"})}, qual_of)
    assert found.at(1).keras_fit and not found.at(1).gradient_tape
