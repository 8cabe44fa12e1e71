"""Reference kernels: losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss)."""
