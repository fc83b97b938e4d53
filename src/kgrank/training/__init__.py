"""Training a PyKEEN model from a hyperparameter file: the validated hyperparameters and
budget, the training step and loss kernels, early stopping, and the memory allocator
setting for the process that trains."""
